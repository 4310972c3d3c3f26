// Command codesize fails when a Go file or function of the product is
// longer than the limits its contributors keep (docs/ARCHITECTURE.md,
// Working on it): a file holds at most 600 lines, a test file 800, a
// function or method outside the tests 80, from its func line to its
// closing brace. Long files and functions are where a reader loses the
// thread; the limits ask that one be split by what its parts do before it
// grows past them. (A test's table of cases may run longer than 80 lines
// and still read as one.)
//
//	go run -C tools ./cmd/codesize ..
//
// It walks the directory given (the repository's root), leaving out the
// tools module, testdata and hidden directories, and prints each file or
// function over its limit, exiting 1 if there is one.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const (
	maxFileLines     = 600
	maxTestFileLines = 800
	maxFuncLines     = 80
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: codesize DIR")
		os.Exit(2)
	}
	over, err := check(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "codesize:", err)
		os.Exit(2)
	}
	for _, o := range over {
		fmt.Println(o)
	}
	if len(over) > 0 {
		os.Exit(1)
	}
}

// check returns a line for each file and function under root that is over
// its limit.
func check(root string) ([]string, error) {
	var over []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "tools" || name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		test := strings.HasSuffix(path, "_test.go")
		limit := maxFileLines
		if test {
			limit = maxTestFileLines
		}
		if n := fset.File(f.Pos()).LineCount(); n > limit {
			over = append(over, fmt.Sprintf("%s: %d lines, over %d", path, n, limit))
		}
		if test {
			return nil
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			if n := end.Line - start.Line + 1; n > maxFuncLines {
				over = append(over, fmt.Sprintf("%s:%d: %s is %d lines, over %d", path, start.Line, funcName(fn), n, maxFuncLines))
			}
		}
		return nil
	})
	return over, err
}

// funcName is fn's name, with its receiver's type for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if g, ok := t.(*ast.IndexListExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
