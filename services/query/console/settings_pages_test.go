//go:build browser

package console_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestExtractionSettingsPage: the page shows the corpus's settings and version, saves
// edited settings as the next version (what the API then serves), shows the API's
// message for invalid ones, re-extracts the corpus, and says a proposal needs a chat
// model when the platform has none. It works on a corpus of its own, so that the
// re-extraction does not touch the demo corpus the other pages read.
func TestExtractionSettingsPage(t *testing.T) {
	s := upStack(t)
	const corpus = "settings_page"
	resp, err := http.Post(s.direct+"/v1/corpora/"+corpus+"/documents", "application/json",
		strings.NewReader(`{"id":"keeper","title":"The keeper","text":"Tom Arden keeps Gullhead Lighthouse. He trained at the Marrow Bay Marine Institute."}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("upload: %s", resp.Status)
	}
	waitStatus(t, s.direct+"/v1/corpora/"+corpus+"/status", "complete")

	b := newBrowser(t, 1280, 800)
	settings := `{"entity_types":["PERSON","PLACE"],"domain":"A lighthouse on a stormy coast."}`
	b.run(t, "opening the page", chromedp.Navigate(s.base+"/ui/#/ask"),
		eval(`localStorage.setItem('graphrag.corpus', '`+corpus+`')`),
		chromedp.Navigate(s.base+"/ui/#/settings"), chromedp.Reload(),
		waitJS(`document.querySelector('#settings-version')?.dataset.version === '0'`),
		eval(`document.querySelector('#settings-json').value = '`+settings+`'`),
		chromedp.Click(chromedp.CSS("#settings-save")),
		waitJS(`!!document.querySelector('#settings-status .ok')`))
	if v := jsString(t, b, `document.querySelector('#settings-version').dataset.version`); v != "1" {
		t.Errorf("version after saving: %s", v)
	}
	var rec struct {
		Version  int
		Settings struct {
			EntityTypes []string `json:"entity_types"`
			Domain      string
		}
	}
	getJSON(t, s.direct+"/v1/corpora/"+corpus+"/extraction-settings", &rec)
	if rec.Version != 1 || strings.Join(rec.Settings.EntityTypes, ",") != "PERSON,PLACE" || rec.Settings.Domain != "A lighthouse on a stormy coast." {
		t.Errorf("the API serves %+v after saving", rec)
	}
	b.screenshot(t, "settings")

	b.run(t, "saving invalid settings", eval(`document.querySelector('#settings-json').value = '{"entity_types":["person"]}'`),
		chromedp.Click(chromedp.CSS("#settings-save")),
		waitJS(`!!document.querySelector('#settings-status .error')`))
	if msg := textOf(b, t, "#settings-status"); !strings.Contains(msg, `"person" is not an upper-case name`) {
		t.Errorf("message for invalid settings: %q", msg)
	}
	b.run(t, "re-extracting", chromedp.Click(chromedp.CSS("#settings-reindex")),
		waitJS(`!!document.querySelector('#settings-status .ok')`))
	if msg := textOf(b, t, "#settings-status"); !strings.Contains(msg, "chunks of 1 documents published for extraction under settings version 1") {
		t.Errorf("message after re-extracting: %q", msg)
	}
	b.run(t, "proposing without a chat model", chromedp.Click(chromedp.CSS("#settings-propose")),
		waitJS(`!!document.querySelector('#settings-status .error')`))
	if msg := textOf(b, t, "#settings-status"); !strings.Contains(msg, "needs a chat model") {
		t.Errorf("message of a proposal without a model: %q", msg)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

// waitStatus polls a corpus status until its state is want.
func waitStatus(t *testing.T, url, want string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var st struct{ State string }
		getJSON(t, url, &st)
		if st.State == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: state %q, want %q", url, st.State, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
