package natsserver

import (
	"errors"
	"fmt"

	"github.com/graphrag/graphrag/pkg/natsembed"
	"github.com/graphrag/graphrag/pkg/platform"
)

var _ platform.NATSServer = Start

// Start starts an embedded NATS server with JetStream on 127.0.0.1.
func Start(c platform.NATSServerConfig) (url string, shutdown func(), err error) {
	srv, err := natsembed.Start(natsembed.Config{DataDir: c.DataDir, Port: c.Port, MaxPayload: c.MaxPayload, Logger: c.Logger})
	if errors.Is(err, natsembed.ErrPortInUse) {
		return "", nil, fmt.Errorf("%w (another graphrag up or NATS server? choose a free port with -nats-port, or -nats-port -1 for a random one)", err)
	}
	if err != nil {
		return "", nil, err
	}
	return srv.ClientURL(), srv.Shutdown, nil
}
