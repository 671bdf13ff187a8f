package browse

import (
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

func TestZZShot(t *testing.T) {
	urls := os.Getenv("SHOT_URLS")
	if urls == "" {
		t.Skip()
	}
	ctx := newBrowser(t)
	for i, u := range strings.Split(urls, " ") {
		if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS("body"))); err != nil {
			t.Fatal(err)
		}
		full, _ := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		top, _ := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		os.WriteFile("/tmp/b13/shot"+string(rune('0'+i))+".png", full, 0o644)
		os.WriteFile("/tmp/b13/shot"+string(rune('0'+i))+"-top.png", top, 0o644)
	}
}
