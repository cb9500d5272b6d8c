package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rocedump/rocedump/capture"
)

// expandCaptures turns a command's capture arguments into the files to
// read (see capture.ExpandPaths) and warns on errOut, one line per
// directory, about the files of directories it left out because they are
// not captures. Why: people keep notes, truth files and reports next to
// their captures, and one of them must not stop the run, but what was not
// read must be said.
func expandCaptures(args []string, errOut io.Writer) ([]string, error) {
	paths, skipped, err := capture.ExpandPaths(args)
	if err != nil {
		return nil, &exitError{code: ExitUsage, err: err}
	}
	skipped = slices.DeleteFunc(skipped, func(s capture.Skipped) bool {
		if s.CopyOf != "" {
			fmt.Fprintf(errOut, "rocedump: warning: %s is a gzip-compressed copy of %s: read once (name both files to read both)\n",
				printableName(filepath.Join(s.Dir, s.Name)), printableName(s.CopyOf))
			return true
		}
		if s.SameAs == "" {
			return false
		}
		// Read twice, every frame would count twice (and look like a
		// mirror's duplicates).
		if name := filepath.Join(s.Dir, s.Name); name == s.SameAs {
			fmt.Fprintf(errOut, "rocedump: warning: %s is given twice: read once\n", printableName(name))
		} else {
			fmt.Fprintf(errOut, "rocedump: warning: %s is the same file as %s: read once\n", printableName(name), printableName(s.SameAs))
		}
		return true
	})
	for len(skipped) > 0 {
		n := 1
		for n < len(skipped) && skipped[n].Dir == skipped[0].Dir {
			n++
		}
		fmt.Fprintf(errOut, "rocedump: warning: %s\n", skippedWarning(skipped[:n]))
		skipped = skipped[n:]
	}
	return paths, nil
}

// maxSkippedNames is how many names a skipped-files warning lists: a
// directory of thousands of other files gets one readable line.
const maxSkippedNames = 10

// skippedWarning says which files of one directory were left out.
func skippedWarning(s []capture.Skipped) string {
	var names []string
	for _, f := range s[:min(len(s), maxSkippedNames)] {
		name := printableName(f.Name)
		if f.Why != "" {
			name += " (" + f.Why + ")"
		}
		names = append(names, name)
	}
	if len(s) > maxSkippedNames {
		names = append(names, fmt.Sprintf("and %d more", len(s)-maxSkippedNames))
	}
	if len(s) == 1 {
		return fmt.Sprintf("skipped 1 file in %s that is not a capture: %s", s[0].Dir, names[0])
	}
	return fmt.Sprintf("skipped %d files in %s that are not captures: %s", len(s), s[0].Dir, strings.Join(names, ", "))
}

// printableName quotes a file name that holds a newline or another
// character that would garble the warning line.
func printableName(name string) string {
	if !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(name)
	}
	return name
}
