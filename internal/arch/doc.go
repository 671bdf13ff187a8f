// Package arch holds no code: its test holds the import table of
// docs/architecture.md ("Imports") against the packages' imports, so that
// the arrows the docs draw are the arrows the code has.
package arch
