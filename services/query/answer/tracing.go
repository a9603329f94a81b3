package answer

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/services/query/evidence"
)

// tracerName names the tracer of the answers.
const tracerName = "github.com/graphrag/graphrag/services/query/answer"

// Span attributes of the answers.
const (
	// AttrAnswerer is "model" or "extractive".
	AttrAnswerer = attribute.Key("graphrag.answerer")
	// AttrSources is the number of passages (Local), reports (Map) or partial answers
	// (Reduce) the answer is written from.
	AttrSources = attribute.Key("graphrag.answer.sources")
	// AttrCited is the number of sources the answer cites (Local, Reduce), of relevant
	// partial answers (Map) or of follow-up questions (FollowUps).
	AttrCited = attribute.Key("graphrag.answer.cited")
	// AttrGlobal is Global's verdict.
	AttrGlobal = attribute.Key("graphrag.answer.global")
)

// traced is an Answerer whose every call but PaysPerReport is a span, "answer.<Method>",
// child of the caller's (the query engine's phase).
type traced struct {
	a    Answerer
	kind string
	tr   trace.Tracer
}

func tracedAnswerer(a Answerer, kind string) Answerer {
	return traced{a: a, kind: kind, tr: otel.Tracer(tracerName)}
}

func (t traced) start(ctx context.Context, method string, sources int) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{AttrAnswerer.String(t.kind)}
	if sources >= 0 {
		attrs = append(attrs, AttrSources.Int(sources))
	}
	return t.tr.Start(ctx, "answer."+method, trace.WithAttributes(attrs...))
}

// end ends span with the call's outcome: cited sources, or err recorded with the
// status Error described by its kind.
func end(span trace.Span, cited int, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, errkind.KindOf(err).String())
	} else {
		span.SetAttributes(AttrCited.Int(cited))
	}
	span.End()
}

func (t traced) Global(ctx context.Context, question string, linked bool) bool {
	ctx, span := t.start(ctx, "Global", -1)
	g := t.a.Global(ctx, question, linked)
	span.SetAttributes(AttrGlobal.Bool(g))
	span.End()
	return g
}

func (t traced) Local(ctx context.Context, question string, found evidence.Retrieved, style Style, onDelta func(string) error) (Answer, error) {
	ctx, span := t.start(ctx, "Local", len(found.Chunks))
	a, err := t.a.Local(ctx, question, found, style, onDelta)
	end(span, len(a.Cited), err)
	return a, err
}

func (t traced) PaysPerReport() bool { return t.a.PaysPerReport() }

func (t traced) Map(ctx context.Context, question string, reports []evidence.Community, style Style) ([]evidence.PartialAnswer, []evidence.Community, error) {
	ctx, span := t.start(ctx, "Map", len(reports))
	partials, mapped, err := t.a.Map(ctx, question, reports, style)
	end(span, len(partials), err)
	return partials, mapped, err
}

func (t traced) Reduce(ctx context.Context, question string, partials []evidence.PartialAnswer, style Style, onDelta func(string) error) (Answer, error) {
	ctx, span := t.start(ctx, "Reduce", len(partials))
	a, err := t.a.Reduce(ctx, question, partials, style, onDelta)
	end(span, len(a.Cited), err)
	return a, err
}

func (t traced) FollowUps(ctx context.Context, question string, primer []evidence.Community, keyEntities []string, n int) []string {
	ctx, span := t.start(ctx, "FollowUps", len(primer))
	qs := t.a.FollowUps(ctx, question, primer, keyEntities, n)
	end(span, len(qs), nil)
	return qs
}
