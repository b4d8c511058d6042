package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// parseAnywhere parses flags that may appear before, between or after the
// positional arguments ("check FILE --format json"); "--" ends the flags.
// -h and --help print the usage (text, then the flags) to stdout and
// report help=true; other errors are printed to stderr with the usage. ok
// is false in both cases.
func parseAnywhere(fs *flag.FlagSet, args []string, text string, stdout, stderr io.Writer) (pos []string, help, ok bool) {
	usage := func(w io.Writer) { printUsage(fs, text, w) }
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage(stdout)
				return nil, true, false
			}
			fmt.Fprintf(stderr, "forge-lsp %s: %v\n", fs.Name(), err)
			usage(stderr)
			return nil, false, false
		}
		if fs.NArg() == 0 {
			return pos, false, true
		}
		// fs.Parse stops at the first positional argument, or after "--"
		// (then everything left is positional).
		consumed := len(rest) - fs.NArg()
		if consumed > 0 && rest[consumed-1] == "--" {
			return append(pos, fs.Args()...), false, true
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
}

// printUsage writes a command's usage to w: text, then the flags of fs
// with their defaults.
func printUsage(fs *flag.FlagSet, text string, w io.Writer) {
	fmt.Fprint(w, text)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}
