// Package arch holds no code: its test holds the import table of
// README.md's "Architecture" section against the packages' imports, so
// that the arrows the README draws are the arrows the code has.
package arch
