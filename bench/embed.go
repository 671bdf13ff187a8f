package bench

import (
	"embed"
	"io/fs"
)

//go:embed cases configs
var embedded embed.FS

// EmbeddedCases returns the suite embedded in the binary: the tree of
// bench/cases, with case files at <domain>/<id>.yaml.
func EmbeddedCases() fs.FS {
	sub, err := fs.Sub(embedded, "cases")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return sub
}

// EmbeddedConfigs returns the configurations embedded in the binary (the
// files of bench/configs).
func EmbeddedConfigs() fs.FS {
	sub, err := fs.Sub(embedded, "configs")
	if err != nil {
		panic(err)
	}
	return sub
}

// LoadEmbeddedCases loads the embedded suite; files are named as in the
// repository (bench/cases/<domain>/<id>.yaml).
func LoadEmbeddedCases() ([]*Case, Problems, error) {
	return loadCases(EmbeddedCases(), ".", func(p string) string { return "bench/cases/" + p })
}
