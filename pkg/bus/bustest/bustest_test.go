package bustest_test

import (
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestStartServerAndConnect(t *testing.T) {
	s := bustest.StartServer(t)
	nc := bustest.Connect(t, s)
	sub, err := nc.SubscribeSync("ping")
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if err := nc.Publish("ping", []byte("pong")); err != nil {
		t.Fatalf("publish: %v", err)
	}
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("next msg: %v", err)
	}
	if string(m.Data) != "pong" {
		t.Fatalf("got %q, want %q", m.Data, "pong")
	}
}

func TestMessages(t *testing.T) {
	s := bustest.StartServer(t)
	b, err := bus.New(bustest.Connect(t, s))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.EnsureStream(t.Context(), bus.StreamSpec{Name: "S", Subjects: []string{"s.>"}}); err != nil {
		t.Fatal(err)
	}
	if got := bustest.Messages(t, b, "S", "s.a"); len(got) != 0 {
		t.Fatalf("Messages of an empty subject = %q", got)
	}
	for _, m := range []string{"a1", "b1", "a2", "a3"} {
		if _, err := b.Publish(t.Context(), "s."+m[:1], []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, d := range bustest.Messages(t, b, "S", "s.a") {
		got = append(got, string(d))
	}
	if !slices.Equal(got, []string{"a1", "a2", "a3"}) {
		t.Fatalf("Messages = %q, want [a1 a2 a3]", got)
	}
}
