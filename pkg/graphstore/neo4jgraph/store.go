package neo4jgraph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	neo4jconfig "github.com/neo4j/neo4j-go-driver/v5/neo4j/config"

	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/graphstore"
)

var _ graphstore.Store = (*store)(nil)

type config struct {
	auth         neo4j.AuthToken
	database     string
	batchRows    int
	maxRetryTime time.Duration
}

// Option configures Open.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithBasicAuth logs in with a user name and password (default: no
// authentication, for servers with auth disabled).
func WithBasicAuth(user, password string) Option {
	return optionFunc(func(c *config) { c.auth = neo4j.BasicAuth(user, password, "") })
}

// WithDatabase selects the database (default: the server's default database).
func WithDatabase(name string) Option {
	return optionFunc(func(c *config) { c.database = name })
}

// WithBatchRows bounds the rows sent in one UNWIND statement (default 2000); a
// bigger Merge is split into several statements of the same transaction.
func WithBatchRows(n int) Option {
	return optionFunc(func(c *config) { c.batchRows = n })
}

// WithMaxRetryTime bounds how long a transaction is retried after transient
// errors such as deadlocks (default 30s, the driver's default).
func WithMaxRetryTime(d time.Duration) Option {
	return optionFunc(func(c *config) { c.maxRetryTime = d })
}

// Store is the Neo4j graphstore.Store. It is safe for concurrent use. Its methods
// check their arguments, and are traced, in graphstore.Validating, which holds the
// driver, store.
type Store struct {
	graphstore.Store
	s *store
}

// store is the driver: Cypher transactions over the schema below.
type store struct {
	driver neo4j.DriverWithContext
	cfg    config

	// mu guards closed; operations hold it shared so Close waits for them and
	// the driver is never closed under a running transaction.
	mu     sync.RWMutex
	closed bool
}

// schema is created at Open; every statement is idempotent. Composite
// uniqueness constraints (available in Community edition) give each identity a
// range index, the pair hash index lets a Merge find a pair's RELATED without
// expanding its ends, and the corpus indexes serve corpus-wide scans.
var schema = []string{
	"CREATE CONSTRAINT graphrag_entity IF NOT EXISTS FOR (e:Entity) REQUIRE (e.corpus, e.key) IS UNIQUE",
	"CREATE CONSTRAINT graphrag_chunk IF NOT EXISTS FOR (c:Chunk) REQUIRE (c.corpus, c.id) IS UNIQUE",
	"CREATE CONSTRAINT graphrag_community IF NOT EXISTS FOR (c:Community) REQUIRE (c.corpus, c.id) IS UNIQUE",
	"CREATE CONSTRAINT graphrag_membership IF NOT EXISTS FOR (m:Membership) REQUIRE (m.corpus, m.key) IS UNIQUE",
	"CREATE CONSTRAINT graphrag_corpus IF NOT EXISTS FOR (c:Corpus) REQUIRE c.name IS UNIQUE",
	"CREATE INDEX graphrag_related_pk IF NOT EXISTS FOR ()-[x:RELATED]-() ON (x.pk)",
	// The EVIDENCE relationships of ADR 0029 are gone (ADR 0036), and their index.
	"DROP INDEX graphrag_evidence_pk IF EXISTS",
	"CREATE INDEX graphrag_entity_corpus IF NOT EXISTS FOR (e:Entity) ON (e.corpus)",
	"CREATE INDEX graphrag_chunk_corpus IF NOT EXISTS FOR (c:Chunk) ON (c.corpus)",
	"CREATE INDEX graphrag_community_corpus IF NOT EXISTS FOR (c:Community) ON (c.corpus)",
	"CREATE INDEX graphrag_membership_corpus IF NOT EXISTS FOR (m:Membership) ON (m.corpus)",
}

// Open connects to the server at uri (bolt:// or neo4j://), checks that it
// answers and sets up the schema.
func Open(ctx context.Context, uri string, opts ...Option) (*Store, error) {
	cfg := config{auth: neo4j.NoAuth(), batchRows: 2000, maxRetryTime: 30 * time.Second}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if cfg.batchRows < 1 {
		return nil, fmt.Errorf("opening neo4j graph store: batch rows %d: %w", cfg.batchRows, graphstore.ErrInvalid)
	}
	drv, err := neo4j.NewDriverWithContext(uri, cfg.auth, func(c *neo4jconfig.Config) {
		c.MaxTransactionRetryTime = cfg.maxRetryTime
	})
	if err != nil {
		return nil, fmt.Errorf("opening neo4j graph store %s: %w", uri, err)
	}
	s := &store{driver: drv, cfg: cfg}
	if err := s.setup(ctx); err != nil {
		_ = drv.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("opening neo4j graph store %s: %w", uri, err)
	}
	return &Store{Store: graphstore.Validating(s), s: s}, nil
}

func (s *store) setup(ctx context.Context) error {
	if err := s.driver.VerifyConnectivity(ctx); err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	// Schema statements cannot share a transaction with each other or with data.
	for _, q := range schema {
		if err := s.write(ctx, "creating schema", func(tx neo4j.ManagedTransaction) error {
			_, err := run(ctx, tx, q, nil)
			return err
		}); err != nil {
			return err
		}
	}
	if err := s.read(ctx, "waiting for indexes", func(tx neo4j.ManagedTransaction) error {
		_, err := run(ctx, tx, "CALL db.awaitIndexes(300)", nil)
		return err
	}); err != nil {
		return err
	}
	if err := s.migrateEvidence(ctx); err != nil {
		return err
	}
	return s.migrateTypeOther(ctx)
}

// Close closes the driver; calling it again returns nil.
func (s *store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if err := s.driver.Close(context.Background()); err != nil {
		return fmt.Errorf("closing neo4j graph store: %w", err)
	}
	return nil
}

// Ping checks that the server answers. A server that cannot be reached fails it at
// once: a transaction would be retried for up to the retry time first.
func (s *store) Ping(ctx context.Context) error {
	s.mu.RLock()
	closed := s.closed
	var err error
	if !closed {
		err = s.driver.VerifyConnectivity(ctx)
	}
	s.mu.RUnlock()
	switch {
	case closed:
		return fmt.Errorf("pinging: %w", graphstore.ErrClosed)
	case err != nil:
		return fmt.Errorf("pinging: %w", translate(ctx, err))
	}
	return s.read(ctx, "pinging", func(tx neo4j.ManagedTransaction) error {
		_, err := run(ctx, tx, "RETURN 1", nil)
		return err
	})
}

func (s *store) read(ctx context.Context, doing string, fn func(neo4j.ManagedTransaction) error) error {
	return s.tx(ctx, doing, neo4j.AccessModeRead, fn)
}

func (s *store) write(ctx context.Context, doing string, fn func(neo4j.ManagedTransaction) error) error {
	return s.tx(ctx, doing, neo4j.AccessModeWrite, fn)
}

// tx runs fn in a managed transaction, which the driver retries on transient
// errors; fn must therefore keep no state across calls.
func (s *store) tx(ctx context.Context, doing string, mode neo4j.AccessMode, fn func(neo4j.ManagedTransaction) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fmt.Errorf("%s: %w", doing, graphstore.ErrClosed)
	}
	sess := s.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: mode, DatabaseName: s.cfg.database})
	defer func() { _ = sess.Close(context.WithoutCancel(ctx)) }()
	work := func(tx neo4j.ManagedTransaction) (any, error) { return nil, fn(tx) }
	var err error
	if mode == neo4j.AccessModeWrite {
		_, err = sess.ExecuteWrite(ctx, work)
	} else {
		_, err = sess.ExecuteRead(ctx, work)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", doing, translate(ctx, err))
	}
	return nil
}

// Neo4j status codes the store translates into graphstore errors.
const (
	codeProcedureNotFound = "Neo.ClientError.Procedure.ProcedureNotFound"
	codeClientError       = "Neo.ClientError."
)

// translate maps driver errors onto the graphstore sentinels at the boundary:
// a cancelled context stays a context error, a closed driver is ErrClosed, a server
// that cannot serve now is an outage (Unavailable), and a client error the server
// raised because of the input is ErrInvalid.
func translate(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%w)", cerr, err)
	}
	var usage *neo4j.UsageError
	if errors.As(err, &usage) && strings.Contains(usage.Message, "closed") {
		return fmt.Errorf("%w: %w", graphstore.ErrClosed, err)
	}
	if outage(err) {
		return errkind.Down(graphstore.Dependency, err)
	}
	var nerr *neo4j.Neo4jError
	if errors.As(err, &nerr) && (strings.HasPrefix(nerr.Code, "Neo.ClientError.Statement.") ||
		strings.HasPrefix(nerr.Code, "Neo.ClientError.Schema.ConstraintValidationFailed")) {
		return fmt.Errorf("%w: %w", graphstore.ErrInvalid, err)
	}
	return err
}

// Unavailable returns err as the failure of a graph store that is down
// (errkind.Down(graphstore.Dependency, err)) when the driver's error means the server
// cannot serve now, and err unchanged otherwise: what the store's methods return for
// it. Tests give it the driver's error types to make a store's outage.
func Unavailable(err error) error {
	if outage(err) {
		return errkind.Down(graphstore.Dependency, err)
	}
	return err
}

// outage reports whether a driver error means the server cannot serve now, so that
// the same call may succeed later:
//   - it cannot be reached: a ConnectivityError (refused, reset or lost connection, a
//     session expired, a read or write timeout, no connection from the pool in time, no
//     routing table), or a network error or EOF before the driver wrapped it;
//   - it answered an error the driver itself retries (Neo4jError.IsRetriable: every
//     TransientError, as a database unavailable or a deadlock, and a leader switch,
//     NotALeader or ForbiddenOnReadOnlyDatabase), which reached the store because it
//     outlasted the driver's retries;
//   - the driver ran out of retries (TransactionExecutionLimit), and the last attempt's
//     error is one of the above.
//
// A ConnectivityError during a commit (CommitFailedDeadError) is one too, though the
// driver does not retry it: the commit may have happened, and the store's writes are
// idempotent, so doing it again later is safe.
func outage(err error) bool {
	if limit, ok := errors.AsType[*neo4j.TransactionExecutionLimit](err); ok {
		return len(limit.Errors) > 0 && outage(limit.Errors[len(limit.Errors)-1])
	}
	if _, ok := errors.AsType[*neo4j.ConnectivityError](err); ok {
		return true
	}
	if nerr, ok := errors.AsType[*neo4j.Neo4jError](err); ok {
		return nerr.IsRetriable()
	}
	var nete net.Error
	return errors.As(err, &nete) || errors.Is(err, io.EOF) || neo4j.IsRetryable(err)
}

// profile, when tests set it, runs every statement under PROFILE and receives
// its executed plan; it is nil otherwise.
var profile func(cypher string, plan neo4j.ProfiledPlan)

// run executes one statement and collects its records.
func run(ctx context.Context, tx neo4j.ManagedTransaction, cypher string, params map[string]any) ([]*neo4j.Record, error) {
	if profile != nil {
		return runProfiled(ctx, tx, cypher, params)
	}
	res, err := tx.Run(ctx, cypher, params)
	if err != nil {
		return nil, err
	}
	return res.Collect(ctx)
}

func runProfiled(ctx context.Context, tx neo4j.ManagedTransaction, cypher string, params map[string]any) ([]*neo4j.Record, error) {
	res, err := tx.Run(ctx, "PROFILE "+cypher, params)
	if err != nil {
		return nil, err
	}
	recs, err := res.Collect(ctx)
	if err != nil {
		return nil, err
	}
	sum, err := res.Consume(ctx)
	if err != nil {
		return nil, err
	}
	if plan := sum.Profile(); plan != nil {
		profile(cypher, plan)
	}
	return recs, nil
}

// runBatched runs cypher once per slice of at most s.cfg.batchRows rows, passed
// as $rows, with the other params unchanged.
func runBatched[T any](ctx context.Context, s *store, tx neo4j.ManagedTransaction, cypher string, params map[string]any, rows []T) ([]*neo4j.Record, error) {
	var out []*neo4j.Record
	for len(rows) > 0 {
		n := min(len(rows), s.cfg.batchRows)
		p := make(map[string]any, len(params)+1)
		maps.Copy(p, params)
		p["rows"] = rows[:n]
		recs, err := run(ctx, tx, cypher, p)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
		rows = rows[n:]
	}
	return out, nil
}
