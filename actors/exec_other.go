//go:build !unix

package actors

import "os/exec"

// killGroup leaves the default: cancelling kills the program only.
func killGroup(*exec.Cmd) {}

// killRest does nothing where process groups are not used.
func killRest(*exec.Cmd) {}
