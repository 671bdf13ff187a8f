// Command house prints measures of the module's structure, for reviews of
// how it reads: the lines of each package (test files and
// testdata left out), the arrows between the module's packages (imports,
// internal/ packages marked), and the longest functions.
//
// Usage, from the repository's root:
//
//	go run ./scripts/house [-longest 15]
//	go run ./scripts/house -before DIR [-label NAME]
//
// With -before it prints instead, for the tree at DIR and the working
// tree side by side, the figures of figures.go: the shapes of a run's
// settings, what one setting touches, the switches over actor types,
// the files that name a tool, references to documents not in the tree
// and leftovers.
//
// scripts/house.sh prints these beside the count of functions no binary
// reaches (golang.org/x/tools/cmd/deadcode).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const module = "github.com/patchbench/patchbench/"

func main() {
	longest := flag.Int("longest", 15, "how many of the longest functions to list")
	before := flag.String("before", "", "print the figures of this tree (a checkout of an earlier commit) beside the working tree's, and nothing else")
	label := flag.String("label", "before", "the name of the -before tree's column")
	verbose := flag.Bool("v", false, "with -before, also list where each shape, switch and tool file is")
	flag.Parse()
	if *before != "" {
		var places io.Writer = io.Discard
		if *verbose {
			places = os.Stdout
			fmt.Println(*label + ":")
		}
		b, err := figures(*before, places)
		if err == nil {
			var a []figure
			if *verbose {
				fmt.Println("now:")
			}
			if a, err = figures(".", places); err == nil {
				printFigures(os.Stdout, *label, "now", b, a)
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "house:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(".", *longest, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "house:", err)
		os.Exit(1)
	}
}

// fn is one function or method and its length in lines.
type fn struct {
	name  string
	lines int
}

// pkg is one package directory: its non-test lines and the module's
// packages it imports.
type pkg struct {
	lines   int
	imports map[string]bool
}

func run(root string, longest int, w io.Writer) error {
	fset := token.NewFileSet()
	pkgs := map[string]*pkg{}
	var fns []fn
	err := walkFiles(root, func(p string) error {
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		pk := pkgs[dir]
		if pk == nil {
			pk = &pkg{imports: map[string]bool{}}
			pkgs[dir] = pk
		}
		n, err := countLines(p)
		if err != nil {
			return err
		}
		pk.lines += n
		for _, imp := range f.Imports {
			if rel, ok := strings.CutPrefix(strings.Trim(imp.Path.Value, `"`), module); ok {
				pk.imports[rel] = true
			}
		}
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				fns = append(fns, fn{dir + ":" + funcName(fd), fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var dirs []string
	total := 0
	for d, p := range pkgs {
		dirs = append(dirs, d)
		total += p.lines
	}
	sort.Strings(dirs)
	fmt.Fprintf(w, "packages: %d, non-test lines: %d\n", len(dirs), total)
	for _, d := range dirs {
		var imps []string
		for i := range pkgs[d].imports {
			imps = append(imps, i)
		}
		sort.Strings(imps)
		fmt.Fprintf(w, "  %-28s %6d  -> %s\n", d, pkgs[d].lines, strings.Join(imps, " "))
	}
	sort.SliceStable(fns, func(i, j int) bool { return fns[i].lines > fns[j].lines })
	fmt.Fprintf(w, "longest functions:\n")
	for _, f := range fns[:min(longest, len(fns))] {
		fmt.Fprintf(w, "  %4d %s\n", f.lines, f.name)
	}
	return nil
}

// walkFiles calls fn with the path of each file below root, but those of
// testdata, node_modules and hidden directories.
func walkFiles(root string, fn func(path string) error) error {
	return filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		return fn(p)
	})
}

// funcName is Recv.Name for a method, Name for a function.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// countLines counts the lines of a file.
func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	n := 0
	for sc.Scan() {
		n++
	}
	return n, sc.Err()
}
