package rundir

import "errors"

// codeOf returns the code of the first error of this package in err's
// chain: an *Error's Code, or the code of its type (a *LineError has its
// cause's code when the cause has one, else CodeLineTooLong or
// CodeDamagedLine); "" when there is none.
func codeOf(err error) string {
	switch e := err.(type) {
	case nil:
		return ""
	case *Error:
		return e.Code
	case *LineError:
		if c := codeOf(e.Err); c != "" {
			return c
		}
		if errors.Is(e.Err, ErrLineTooLong) {
			return CodeLineTooLong
		}
		return CodeDamagedLine
	case *ManifestError:
		return CodeDamagedManifest
	case *WriteError:
		return CodeWriteFailed
	case *OutsideRunError:
		return CodeOutsideRun
	case *SettingsError:
		return CodeSettingsDiffer
	case interface{ Unwrap() []error }:
		for _, e := range e.Unwrap() {
			if c := codeOf(e); c != "" {
				return c
			}
		}
		return ""
	}
	return codeOf(errors.Unwrap(err))
}
