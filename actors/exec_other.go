//go:build !unix

package actors

import "os/exec"

// killGroup leaves the default: cancelling kills the program only.
func killGroup(*exec.Cmd) {}
