// Command rocedump analyses RoCEv2 packet captures from GPU cluster fabrics.
package main

import (
	"os"

	"github.com/rocedump/rocedump/cli"
)

func main() {
	os.Exit(cli.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
