package runtime_test

import (
	"context"
	"fmt"

	"github.com/patchbench/patchbench/runtime"
)

func ExampleParsePointer() {
	p, err := runtime.ParsePointer("/a~1b/m~0n/0")
	fmt.Printf("%q %v\n", []string(p), err)
	fmt.Println(p.String())
	_, err = runtime.ParsePointer("/bad~2escape")
	fmt.Println(err)
	// Output:
	// ["a/b" "m~n" "0"] <nil>
	// /a~1b/m~0n/0
	// invalid JSON Pointer "/bad~2escape": "~" at byte 4 is not followed by 0 or 1
}

func ExampleRegion() {
	w := runtime.MustRegion("/tickets/*/reply", "/audit/-")
	fmt.Println(w.Contains(runtime.MustPointer("/tickets/3/reply")))
	fmt.Println(w.Contains(runtime.MustPointer("/tickets/3/replyTo")))
	fmt.Println(w.Contains(runtime.MustPointer("/audit/-")))
	fmt.Println(w.Intersect(runtime.MustRegion("/tickets/7")))
	// Output:
	// true
	// false
	// true
	// [/tickets/7/reply]
}

func ExampleView() {
	state, _ := runtime.ParseDocument([]byte(`{
	  "patients": [
	    {"name": "Ada", "slot": "09:00", "diagnosis": "PB-CANARY-DX-1"},
	    {"name": "Bo", "slot": "09:30", "diagnosis": "PB-CANARY-DX-2"}
	  ],
	  "clinic": "North"
	}`))
	v := runtime.ViewRegion{
		Include: runtime.MustRegion("/patients"),
		Exclude: runtime.MustRegion("/patients/*/diagnosis"),
	}
	out, _ := runtime.EncodeIndent(runtime.View(state.Value(), v), "  ")
	fmt.Println(string(out))
	// Output:
	// {
	//   "patients": [
	//     {
	//       "name": "Ada",
	//       "slot": "09:00"
	//     },
	//     {
	//       "name": "Bo",
	//       "slot": "09:30"
	//     }
	//   ]
	// }
}

func ExampleContract_Verify() {
	contract := runtime.MustCompile(runtime.ContractSpec{
		View:   runtime.ViewSpec{Include: []string{"/ticket"}},
		Write:  []string{"/ticket/status", "/ticket/reply"},
		Source: []string{"/ticket"},
		Phases: []string{"triage"},
	})
	state, _ := runtime.ParseDocument([]byte(`{"ticket": {"status": "open", "reply": null}, "card": "4000-PB-CANARY"}`))
	opts := runtime.VerifyOptions{Gates: runtime.DefaultGates, Phase: "triage"}

	good := `{"patch": [{"op": "replace", "path": "/ticket/status", "value": "closed"}], "note": "done"}`
	d, _ := contract.Verify(context.Background(), state, []byte(good), opts)
	fmt.Println(d.Committed, string(d.State.Bytes()))

	leak := `[{"op": "copy", "from": "/card", "path": "/ticket/reply"}]`
	d, _ = contract.Verify(context.Background(), state, []byte(leak), opts)
	r := d.Rejection()
	fmt.Println(d.Committed, r.Gate, r.Code, r.Pointer)
	// Output:
	// true {"ticket":{"status":"closed","reply":null},"card":"4000-PB-CANARY"}
	// false scope source_outside_region /card
}

func ExampleCommutation() {
	draftA := runtime.Footprint{
		Read:  runtime.ViewRegion{Include: runtime.MustRegion("/sections/intro")},
		Write: runtime.MustRegion("/sections/intro/text"),
	}
	draftB := runtime.Footprint{
		Read:  runtime.ViewRegion{Include: runtime.MustRegion("/sections/results")},
		Write: runtime.MustRegion("/sections/results/text"),
	}
	summary := runtime.Footprint{
		Read:  runtime.ViewRegion{Include: runtime.MustRegion("/sections")},
		Write: runtime.MustRegion("/summary"),
	}
	fmt.Println(runtime.Commutation(draftA, draftB).Commute)
	c := runtime.Commutation(draftA, summary)
	fmt.Println(c.Commute, c.Blocking[0].Kind, c.Blocking[0].Paths)
	// Output:
	// true
	// false write/read [/sections/intro/text]
}

func ExampleSession() {
	state, _ := runtime.ParseDocument([]byte(`{"meta": {"phase": "triage"}, "ticket": {"status": "open"}, "card": "4000-PB-CANARY"}`))
	triage := runtime.MustCompile(runtime.ContractSpec{
		View:   runtime.ViewSpec{Include: []string{"/ticket"}},
		Write:  []string{"/ticket/status"},
		Source: []string{"/ticket"},
		Phases: []string{"triage"},
	})
	s := runtime.NewSession(state, runtime.MustPointer("/meta/phase"))
	opts := runtime.StepOptions{Gates: runtime.DefaultGates, AdvanceTo: "done"}

	// A rejected proposal changes nothing: the actor may try again.
	res, _ := s.Step(context.Background(), triage, []byte(`[{"op": "copy", "from": "/card", "path": "/ticket/status"}]`), opts)
	fmt.Println(res.Committed, res.Rejection().Code, s.Phase())

	// A commit, then the phase moves to advance_to.
	res, _ = s.Step(context.Background(), triage, []byte(`[{"op": "replace", "path": "/ticket/status", "value": "resolved"}]`), opts)
	fmt.Println(res.Committed, s.Phase(), string(s.State().Bytes()))
	// Output:
	// false source_outside_region triage
	// true done {"card":"4000-PB-CANARY","meta":{"phase":"done"},"ticket":{"status":"resolved"}}
}
