package probe

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// InitializeSent is what the crawl's client sends in initialize.
type InitializeSent struct {
	ProtocolVersion string          `json:"protocolVersion"`
	ClientInfo      json.RawMessage `json:"clientInfo"`
	Capabilities    json.RawMessage `json:"capabilities"`
}

// Declared returns the initialize parameters the crawl's client sends,
// taken off the wire of a handshake with an in-memory server: the SDK
// decides part of them, so they are read, not restated.
func Declared(ctx context.Context) (InitializeSent, error) {
	var sent InitializeSent
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mcp.NewServer(&mcp.Implementation{Name: "declared", Version: "0"}, nil).Connect(ctx, st, nil)
	if err != nil {
		return sent, err
	}
	defer ss.Close()
	rec := &recordTransport{inner: ct}
	cs, err := newClient().Connect(ctx, rec, &mcp.ClientSessionOptions{ProtocolVersion: RequestedVersion})
	if err != nil {
		return sent, err
	}
	cs.Close()
	err = json.Unmarshal(rec.params, &sent)
	return sent, err
}

// recordTransport keeps the params of the initialize request written.
type recordTransport struct {
	inner  mcp.Transport
	params json.RawMessage
}

func (t *recordTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordConn{Connection: c, t: t}, nil
}

type recordConn struct {
	mcp.Connection
	t *recordTransport
}

func (c *recordConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" {
		c.t.params = append(json.RawMessage(nil), req.Params...)
	}
	return c.Connection.Write(ctx, msg)
}
