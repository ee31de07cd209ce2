package main

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// completionShells are the shells deepprof completion writes a script for.
var completionShells = []string{"bash", "zsh", "fish"}

func runCompletion(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("completion", "completion bash|zsh|fish", stdout)
	fs.extra = "\nWrites the shell's completion script for deepprof's commands and their flags, made from the same\n" +
		"definitions as the help. Load it in the shell's startup file, for example:\n" +
		"  bash: source <(deepprof completion bash)\n" +
		"  zsh:  source <(deepprof completion zsh)\n" +
		"  fish: deepprof completion fish | source\n"
	pos, help, err := parseFlags(fs, args)
	if help || err != nil {
		return err
	}
	if len(pos) != 1 || !slices.Contains(completionShells, pos[0]) {
		msg := fmt.Sprintf("completion takes one shell, bash, zsh or fish, got %s", arguments(len(pos)))
		if len(pos) == 1 {
			msg = fmt.Sprintf("completion: no script for the shell %q: bash, zsh or fish", pos[0])
		}
		return &usageError{msg}
	}
	spec, err := completionSpec(stdin)
	if err != nil {
		return err
	}
	switch pos[0] {
	case "bash":
		_, err = io.WriteString(stdout, bashCompletion(spec))
	case "zsh":
		_, err = io.WriteString(stdout, "#compdef deepprof\nautoload -U +X bashcompinit && bashcompinit\n"+bashCompletion(spec))
	case "fish":
		_, err = io.WriteString(stdout, fishCompletion(spec))
	}
	return err
}

// commandFlags is a command and its flags, as its help lists them.
type commandFlags struct {
	name  string
	flags []string
}

// flagLine is a flag's line in a command's help (printFlags).
var flagLine = regexp.MustCompile(`(?m)^  --([a-z][a-z0-9-]*)`)

// completionSpec is every command with its flags, read from each
// command's --help: what completion offers cannot disagree with the help.
func completionSpec(stdin io.Reader) ([]commandFlags, error) {
	var out []commandFlags
	for _, c := range commands() {
		var help bytes.Buffer
		if err := c.run([]string{"--help"}, stdin, &help, io.Discard); err != nil {
			return nil, fmt.Errorf("completion: %s --help: %w", c.name, err)
		}
		cf := commandFlags{name: c.name}
		for _, m := range flagLine.FindAllStringSubmatch(help.String(), -1) {
			cf.flags = append(cf.flags, "--"+m[1])
		}
		out = append(out, cf)
	}
	return out, nil
}

func names(spec []commandFlags) []string {
	out := []string{"help", "version"}
	for _, c := range spec {
		out = append(out, c.name)
	}
	return out
}

// bashCompletion completes the command, then its flags; files otherwise.
func bashCompletion(spec []commandFlags) string {
	var b strings.Builder
	b.WriteString("# deepprof completion bash: commands, their flags, files\n_deepprof() {\n")
	b.WriteString("\tlocal cur=${COMP_WORDS[COMP_CWORD]}\n")
	fmt.Fprintf(&b, "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n\t\treturn\n\tfi\n", strings.Join(names(spec), " "))
	b.WriteString("\tlocal flags=\n\tcase ${COMP_WORDS[1]} in\n")
	for _, c := range spec {
		if c.name != "completion" {
			fmt.Fprintf(&b, "\t%s) flags=%q ;;\n", c.name, strings.Join(c.flags, " "))
		}
	}
	fmt.Fprintf(&b, "\thelp) flags=%q ;;\n", strings.Join(names(spec), " "))
	fmt.Fprintf(&b, "\tcompletion) flags=%q ;;\n", strings.Join(completionShells, " "))
	b.WriteString("\tesac\n")
	b.WriteString("\tif [[ $cur == -* || ${COMP_WORDS[1]} == help || ${COMP_WORDS[1]} == completion ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n\telse\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n\tfi\n}\n")
	b.WriteString("complete -o default -F _deepprof deepprof\n")
	return b.String()
}

// fishCompletion completes the command, then its flags.
func fishCompletion(spec []commandFlags) string {
	var b strings.Builder
	b.WriteString("# deepprof completion fish: commands, their flags\n")
	fmt.Fprintf(&b, "complete -c deepprof -n __fish_use_subcommand -f -a %q\n", strings.Join(names(spec), " "))
	for _, c := range spec {
		for _, f := range c.flags {
			fmt.Fprintf(&b, "complete -c deepprof -n '__fish_seen_subcommand_from %s' -l %s\n", c.name, strings.TrimPrefix(f, "--"))
		}
	}
	fmt.Fprintf(&b, "complete -c deepprof -n '__fish_seen_subcommand_from help' -f -a %q\n", strings.Join(names(spec), " "))
	fmt.Fprintf(&b, "complete -c deepprof -n '__fish_seen_subcommand_from completion' -f -a %q\n", strings.Join(completionShells, " "))
	return b.String()
}
