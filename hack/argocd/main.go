// Command argocd is Argo CD's own application controller and repo server (v3.2.12, from its Go
// module), linked into one binary that picks its role from the first argument, so the e2e suite
// can run a real Argo CD against the local cluster without a container registry.
package main

import (
	"fmt"
	"os"

	appcontroller "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	reposerver "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: argocd application-controller|repo-server [flags]")
		os.Exit(2)
	}
	role, args := os.Args[1], os.Args[2:]
	var err error
	switch role {
	case "application-controller":
		cmd := appcontroller.NewCommand()
		cmd.SetArgs(args)
		err = cmd.Execute()
	case "repo-server":
		cmd := reposerver.NewCommand()
		cmd.SetArgs(args)
		err = cmd.Execute()
	default:
		fmt.Fprintf(os.Stderr, "argocd: unknown role %q (application-controller or repo-server)\n", role)
		os.Exit(2)
	}
	if err != nil {
		os.Exit(1)
	}
}
