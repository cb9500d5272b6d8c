// Package cli holds rocedump's cobra commands: flag parsing, wiring and exit
// codes. Analysis lives in the capture, decode, flows and reports packages;
// each command here is an options struct, a NewCmdX that parses flags into
// it, and an xRun that does the work with injected streams.
package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Version is the rocedump version, set at build time with
// -ldflags "-X github.com/rocedump/rocedump/cli.Version=v1.2.3".
var Version = "dev"

// IOStreams are the standard streams a command reads and writes.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// NewCmdRoot builds the rocedump command tree.
func NewCmdRoot(ios IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "rocedump",
		Short: "Analyse RoCEv2 captures from GPU cluster fabrics",
		Long: `rocedump decodes RoCE (RDMA over Converged Ethernet) traffic captured on
GPU cluster fabrics - switch-mirrored pcaps (SPAN, ERSPAN, VLAN-tagged,
truncated by the mirror's snap length) or plain host captures - and tells a
network engineer which Queue Pairs talked, how much, and what went wrong.

It decodes the InfiniBand transport in UDP port 4791 (BTH and every extended
header, CNPs, RDMA CM on QP1), checks the ICRC of every whole frame, and
strips ERSPAN I/II/III, GRE, VXLAN and 802.1Q/QinQ wrappers on the way in.

Exit codes: 0 success, 1 findings at or above --fail-on (report, merge,
live), 2 usage or input error.`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	root.SetHelpCommand(newHelpCmd())
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(NewCmdRead(ios, nil))
	root.AddCommand(NewCmdFlows(ios, nil))
	root.AddCommand(NewCmdExtract(ios, nil))
	root.AddCommand(NewCmdReport(ios, nil))
	root.AddCommand(NewCmdMerge(ios, nil))
	root.AddCommand(NewCmdLive(ios, nil))
	return root
}

// newHelpCmd is `rocedump help [command]`. Cobra's own prints "Unknown help
// topic" and exits 0; here an unknown topic is a usage error (exit 2), as
// an unknown command is.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help provides help for any command: rocedump help [path to command].",
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, _, err := c.Root().Find(args)
			if cmd == nil || err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					names = append(names, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, _, err := c.Root().Find(args)
			if cmd == nil || err != nil {
				return usageErrorf("unknown help topic %q for %q; run 'rocedump --help' for the commands",
					strings.Join(args, " "), c.Root().Name())
			}
			return cmd.Help()
		},
	}
}

// Execute runs rocedump with the given arguments and returns the exit code.
func Execute(args []string, in io.Reader, out, errOut io.Writer) int {
	root := NewCmdRoot(IOStreams{In: in, Out: out, ErrOut: errOut})
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		fmt.Fprintf(errOut, "rocedump: %v\n", err)
	}
	return exitCode(err)
}
