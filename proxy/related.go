package proxy

import (
	"context"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A message the upstream sends while a call is in flight (its progress
// notifications, a request it makes for it) belongs on that call's own
// stream: the Streamable HTTP transport (2025-11-25) says the standalone
// GET stream SHOULD carry only messages unrelated to a running request,
// and a client that opened none would never see them. The relay learns
// the call from where the message came (the call's event stream of an
// HTTP upstream, see streamConn.relatedTo) or from its progress token,
// and passes it to the downstream's write in the context.

type relatedKey struct{}

// withRelated returns ctx saying that the message written with it belongs
// to the client's call id.
func withRelated(ctx context.Context, id jsonrpc.ID) context.Context {
	return context.WithValue(ctx, relatedKey{}, id)
}

// relatedCall is the call withRelated put in ctx.
func relatedCall(ctx context.Context) (jsonrpc.ID, bool) {
	id, ok := ctx.Value(relatedKey{}).(jsonrpc.ID)
	return id, ok && id.IsValid()
}

// sdkIDKey is the type name and package of the key under which the SDK's
// server transport (v1.8.0) looks for the request a message it writes
// relates to. The SDK sets it only for its own Server's handlers and
// keeps the key unexported ("by giving only the StreamableServerTransport
// access to the request ID, we avoid having to make this API decision",
// streamable.go); a relay that writes to the transport directly can only
// answer to the key by its type. TestProgressOnCallStream fails if a
// later SDK renames it.
const (
	sdkIDKeyName = "idContextKey"
	sdkIDKeyPkg  = "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkRelated returns ctx under which the SDK's transport routes a written
// message to the stream of the client's request id.
func sdkRelated(ctx context.Context, id jsonrpc.ID) context.Context {
	return sdkIDContext{ctx, id}
}

type sdkIDContext struct {
	context.Context
	id jsonrpc.ID
}

func (c sdkIDContext) Value(key any) any {
	if t := reflect.TypeOf(key); t != nil && t.Name() == sdkIDKeyName && t.PkgPath() == sdkIDKeyPkg {
		return c.id
	}
	return c.Context.Value(key)
}
