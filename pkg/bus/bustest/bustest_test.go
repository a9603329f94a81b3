package bustest_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

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
