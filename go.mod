module github.com/benchrun/benchrun

go 1.26.8
