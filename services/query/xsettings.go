package query

import (
	"context"
	"fmt"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/extractsettings"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/schema"
)

// settings serves the extraction settings routes over the pipeline's state bucket, the
// chunk collections and the service's chat model.
type settings struct {
	b      *bus.Bus
	chunks extractsettings.ChunkLister
	chat   *llm.Client
}

// errNoChatModel is a proposal asked of a service without a chat model.
var errNoChatModel = errkind.Public(errkind.Unavailable,
	"proposing extraction settings needs a chat model: start the query service (or graphrag up) with -llm-base-url and -llm-chat-model")

func (s settings) state(ctx context.Context) (bus.KV, error) {
	kv, err := s.b.KV(ctx, schema.StateBucket)
	if err != nil {
		return nil, fmt.Errorf("opening the state bucket: %w", err)
	}
	return kv, nil
}

func (s settings) Settings(ctx context.Context, corpus string) (extractsettings.Record, error) {
	kv, err := s.state(ctx)
	if err != nil {
		return extractsettings.Record{}, err
	}
	return extractsettings.Load(ctx, kv, corpus)
}

func (s settings) SaveSettings(ctx context.Context, corpus string, set extractsettings.Settings) (extractsettings.Record, error) {
	kv, err := s.state(ctx)
	if err != nil {
		return extractsettings.Record{}, err
	}
	return extractsettings.Save(ctx, kv, corpus, set)
}

func (s settings) Reindex(ctx context.Context, corpus string) (extractsettings.Reindexed, error) {
	kv, err := s.state(ctx)
	if err != nil {
		return extractsettings.Reindexed{}, err
	}
	return extractsettings.Reindex(ctx, s.b, kv, s.chunks, corpus)
}

func (s settings) Propose(ctx context.Context, corpus string, sample int) (extractsettings.Proposal, error) {
	if s.chat == nil {
		return extractsettings.Proposal{}, errNoChatModel
	}
	passages, err := extractsettings.Sample(ctx, s.chunks, corpus, sample)
	if err != nil {
		return extractsettings.Proposal{}, err
	}
	return extractsettings.Propose(ctx, s.chat, passages)
}
