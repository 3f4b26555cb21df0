package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/results"
)

// writeHTML renders the self-contained HTML report of a report's files into path (stdout
// when path is ""). Files without charts (a report from an older operator) get them drawn
// from their summary and resources.json.
func writeHTML(path string, stdout io.Writer, title string, files map[string][]byte) error {
	if !hasCharts(files) {
		var sum results.Summary
		if err := json.Unmarshal(files[lifecycle.ReportJSON], &sum); err != nil {
			return fmt.Errorf("%s: %w", lifecycle.ReportJSON, err)
		}
		plots, err := lifecycle.Charts(sum, nil)
		if err != nil {
			return err
		}
		var usage []v1alpha1.ResourceUsage
		if b := files["resources.json"]; len(b) > 0 {
			if err := json.Unmarshal(b, &usage); err != nil {
				return fmt.Errorf("resources.json: %w", err)
			}
		}
		if err := lifecycle.UsageCharts(plots, usage); err != nil {
			return err
		}
		for name, b := range plots {
			files[name] = b
		}
	}
	page, err := lifecycle.HTMLReport(title, files)
	if err != nil {
		return err
	}
	return writePage(path, stdout, page)
}

// writeSuiteHTML renders the self-contained HTML report of a suite's report files
// (report.md, table.json, cps.svg, percentiles.svg) into path (stdout when path is "").
func writeSuiteHTML(path string, stdout io.Writer, title string, files map[string][]byte) error {
	page, err := lifecycle.SuiteHTMLReport(title, files)
	if err != nil {
		return err
	}
	return writePage(path, stdout, page)
}

// writePage writes an HTML page into path, or to stdout when path is "" or "-".
func writePage(path string, stdout io.Writer, page []byte) error {
	if path == "" || path == "-" {
		_, err := stdout.Write(page)
		return err
	}
	return os.WriteFile(path, page, 0o644)
}

// hasCharts tells whether a report's files hold a chart.
func hasCharts(files map[string][]byte) bool {
	for name := range files {
		if lifecycle.IsChart(name) {
			return true
		}
	}
	return false
}

// localReportFiles are the report files of local results: rendered from the merged document
// and its summary; a single out dir's own report.md and results.json (the run's options and
// extra sections, e.g. its faults) replace the rendered ones, with the charts drawn from that
// summary.
func localReportFiles(paths []string, title string, merged *results.Document, sum results.Summary) (map[string][]byte, error) {
	if len(paths) == 1 {
		md, errMD := os.ReadFile(filepath.Join(paths[0], lifecycle.ReportMarkdown))
		js, errJS := os.ReadFile(filepath.Join(paths[0], lifecycle.ReportJSON))
		var own results.Summary
		if errMD == nil && errJS == nil && json.Unmarshal(js, &own) == nil {
			files, err := lifecycle.Charts(own, merged)
			if err != nil {
				return nil, err
			}
			files[lifecycle.ReportMarkdown], files[lifecycle.ReportJSON] = md, js
			return files, nil
		}
	}
	return lifecycle.Reports(title, sum, merged, "")
}
