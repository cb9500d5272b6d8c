package cli

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// needArgs is the Args check of a command that takes one or more inputs
// (captures, or merge's reports). Cobra's own said "requires at least 1
// arg(s), only received 0", which names neither what is missing nor how
// to give it. what names the input ("capture", "report"), takes says
// what it may be. When a flag took the one input as its value
// ("rocedump read --format mirror.pcap"), the message says so.
func needArgs(what, takes string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return nil
		}
		msg := fmt.Sprintf("no %s given: %s, where %s", what, cmd.UseLine(), takes)
		cmd.Flags().Visit(func(f *pflag.Flag) {
			v := f.Value.String()
			if f.Value.Type() != "string" || v == "" || v == "-" {
				return
			}
			if _, err := os.Stat(v); err == nil {
				msg += fmt.Sprintf(" (--%s took %q as its value: is it the %s?)", f.Name, v, what)
			}
		})
		return usageErrorf("%s", msg)
	}
}

// noArgs is the Args check of live, which takes its interface from -i.
// Cobra's own said `unknown command "eth0" for "rocedump live"`.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return usageErrorf("%s takes no arguments, got %q: the interface goes in -i, a capture filter in --filter (%s)",
		cmd.CommandPath(), strings.Join(args, " "), cmd.UseLine())
}

// flagError is every command's FlagErrorFunc: pflag's messages made to say
// what the command takes. An unknown flag lists the command's flags; a
// value a flag cannot parse says what the flag wants, not the
// strconv error ("strconv.ParseInt: parsing "abc": invalid syntax"); a
// missing value says what the flag is for. All are usage errors (exit 2).
func flagError(cmd *cobra.Command, err error) error {
	var notExist *pflag.NotExistError
	var invalid *pflag.InvalidValueError
	var required *pflag.ValueRequiredError
	switch {
	case errors.As(err, &notExist):
		return usageErrorf("%v; %s takes %s (%s --help explains them)", err, cmd.CommandPath(), flagNames(cmd), cmd.CommandPath())
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		return usageErrorf("--%s %q: want %s", f.Name, invalid.GetValue(), flagWants(f))
	case errors.As(err, &required):
		_, usage := pflag.UnquoteUsage(required.GetFlag())
		return usageErrorf("%v: %s", err, usage)
	}
	return usageErrorf("%v", err)
}

// flagNames lists the flags of cmd, sorted by long name: "-c/--count,
// -f/--filter, --format".
func flagNames(cmd *cobra.Command) string {
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		n := "--" + f.Name
		if f.Shorthand != "" {
			n = "-" + f.Shorthand + "/" + n
		}
		names = append(names, n)
	})
	sort.Slice(names, func(i, j int) bool {
		return strings.TrimLeft(names[i][strings.Index(names[i], "--"):], "-") < strings.TrimLeft(names[j][strings.Index(names[j], "--"):], "-")
	})
	return strings.Join(names, ", ")
}

// wantAnnotation is the flag annotation that says what a flag takes, for
// flags whose type says too little (a DSCP is a uint8 of 0 to 63).
const wantAnnotation = "rocedump-want"

// flagWants says what a flag takes: its wantAnnotation, or what pflag's
// type of it takes.
func flagWants(f *pflag.Flag) string {
	if w := f.Annotations[wantAnnotation]; len(w) > 0 {
		return w[0]
	}
	switch f.Value.Type() {
	case "int", "int8", "int16", "int32", "int64":
		return "a whole number"
	case "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number, 0 or more"
	case "float32", "float64":
		return "a number"
	case "duration":
		return "a duration with its unit, such as 500us, 1ms or 2s"
	case "bool":
		return "true or false"
	}
	_, usage := pflag.UnquoteUsage(f)
	return usage
}

// captureArgs says what a CAPTURE argument of read, flows and report is.
const captureArgs = "CAPTURE is a pcap or pcapng file (gzip-compressed or not), a directory of them, or - for standard input"
