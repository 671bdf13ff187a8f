package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// figure is one measure of a tree, named as house.sh prints it.
type figure struct {
	name  string
	value int
}

// settingNames are fields that only a description of a run's settings
// holds (names lowered, "_" dropped): a struct type that declares two or
// more of them is one shape of the run's settings.
var settingNames = map[string]bool{"maxturns": true, "maxattempts": true, "maxtoolcalls": true, "maxstepbytes": true,
	"maxanswerbytes": true, "passthreshold": true, "rounds": true, "protocol": true, "disclosure": true, "tokenizer": true}

// actorTypes are the actors' concrete types: providers, no-model actors
// and wrappers. A type switch with a case of one of them is a switch over
// providers or wrappers.
var actorTypes = map[string]bool{"OpenAI": true, "Ollama": true, "Anthropic": true, "Cached": true, "Limited": true, "RoleMap": true,
	"Reference": true, "Oversharer": true, "Follower": true, "Exec": true, "MCPAgent": true}

// providerNames are the live providers' names and spec prefixes: a switch
// case on one of them is a switch over providers.
var providerNames = regexp.MustCompile(`^"(openai|ollama|anthropic)(:)?"$`)

var (
	designRef = regexp.MustCompile(`design \x{a7}`) // a section sign: a citation of a design document the repository does not hold
	issueRef  = regexp.MustCompile(`(?i)\bissues? #?[0-9]+\b`)
	maxTurns  = regexp.MustCompile(`(?i)max[-_]?turns`)
	// readStateParts are the names of read_state's parts: its name,
	// its definition, its arguments and its default depth.
	readStateParts = regexp.MustCompile(`^(ToolReadState|ReadState|DefaultReadDepth|readArgs|ReadArgs)$`)
)

// figures measures the tree at root: the shapes of a run's settings,
// the lines and files that name one setting (max-turns), the switches
// over actor types or provider names, the files that name one tool
// (read_state), and the references to documents not in the tree
// (citations of a design document's sections, tracker numbers). Shapes
// and switches count non-test Go code,
// with their places when verbose is set (printed to w).
func figures(root string, verbose io.Writer) ([]figure, error) {
	fset := token.NewFileSet()
	var (
		shapes, switches, toolFiles, designRefs, issueRefs, turnLines, turnFiles int
	)
	err := walkFiles(root, func(p string) error {
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		isGo := strings.HasSuffix(p, ".go")
		isDoc := strings.HasSuffix(p, ".md") && !strings.HasPrefix(rel, "scripts/")
		if !isGo && !isDoc || strings.HasPrefix(rel, "scripts/house/") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		text := string(b)
		designRefs += len(designRef.FindAllStringIndex(text, -1))
		issueRefs += len(issueRef.FindAllStringIndex(text, -1))
		if !isGo || strings.HasSuffix(p, "_test.go") || strings.HasPrefix(rel, "scripts/") {
			return nil
		}
		if n := len(maxTurns.FindAllStringIndex(text, -1)); n > 0 {
			turnFiles++
			for _, l := range strings.Split(text, "\n") {
				if maxTurns.MatchString(l) {
					turnLines++
				}
			}
		}
		f, err := parser.ParseFile(fset, p, b, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if definesReadState(f, text) {
			toolFiles++
			fmt.Fprintf(verbose, "  %s: defines a part of read_state\n", rel)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.StructType:
				k := 0
				for _, fl := range x.Fields.List {
					for _, id := range fl.Names {
						if settingNames[strings.ReplaceAll(strings.ToLower(id.Name), "_", "")] {
							k++
						}
					}
				}
				if k >= 2 {
					shapes++
					fmt.Fprintf(verbose, "  %s: a struct of run settings\n", fset.Position(x.Pos()))
				}
			case *ast.TypeSwitchStmt:
				if switchOver(x.Body, func(e ast.Expr) bool {
					if s, ok := e.(*ast.StarExpr); ok {
						e = s.X
					}
					switch y := e.(type) {
					case *ast.Ident:
						return actorTypes[y.Name]
					case *ast.SelectorExpr:
						return actorTypes[y.Sel.Name]
					}
					return false
				}) {
					switches++
					fmt.Fprintf(verbose, "  %s: a type switch over actors\n", fset.Position(x.Pos()))
				}
			case *ast.SwitchStmt:
				if switchOver(x.Body, func(e ast.Expr) bool {
					if call, ok := e.(*ast.CallExpr); ok && len(call.Args) == 2 {
						e = call.Args[1] // strings.HasPrefix(spec, "openai:")
					}
					lit, ok := e.(*ast.BasicLit)
					return ok && providerNames.MatchString(lit.Value)
				}) {
					switches++
					fmt.Fprintf(verbose, "  %s: a switch over provider names\n", fset.Position(x.Pos()))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []figure{
		{"run settings: struct types holding them", shapes},
		{"one setting (max-turns): files naming it", turnFiles},
		{"one setting (max-turns): lines naming it", turnLines},
		{"switches over actor types or provider names", switches},
		{"one tool (read_state): files defining its parts", toolFiles},
		{"design-section citations (Go and docs)", designRefs},
		{"tracker-number citations (Go and docs)", issueRefs},
	}, nil
}

// definesReadState reports whether f (of source text) declares a part
// of read_state at its top level: a name of readStateParts, or a value
// that sets a tool's Name to read_state's (a list of the tools' schemas).
func definesReadState(f *ast.File, text string) bool {
	for _, d := range f.Decls {
		switch x := d.(type) {
		case *ast.FuncDecl:
			if readStateParts.MatchString(x.Name.Name) {
				return true
			}
		case *ast.GenDecl:
			for _, sp := range x.Specs {
				switch y := sp.(type) {
				case *ast.TypeSpec:
					if readStateParts.MatchString(y.Name.Name) {
						return true
					}
				case *ast.ValueSpec:
					for _, n := range y.Names {
						if readStateParts.MatchString(n.Name) {
							return true
						}
					}
				}
			}
		}
	}
	return strings.Contains(text, "Name: ToolReadState") || strings.Contains(text, `Name: "read_state"`)
}

// switchOver reports whether a case of a switch's body has an
// expression that is.
func switchOver(body *ast.BlockStmt, is func(ast.Expr) bool) bool {
	for _, st := range body.List {
		if cc, ok := st.(*ast.CaseClause); ok {
			for _, e := range cc.List {
				if is(e) {
					return true
				}
			}
		}
	}
	return false
}

// printFigures prints the figures of two trees side by side.
func printFigures(w io.Writer, beforeName, afterName string, before, after []figure) {
	fmt.Fprintf(w, "%-48s %10s %10s\n", "", beforeName, afterName)
	for i, f := range after {
		fmt.Fprintf(w, "%-48s %10d %10d\n", f.name, before[i].value, f.value)
	}
}
