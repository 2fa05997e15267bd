package httpserve

// MaxInFlight is the one default rule for a server's bound on request body
// bytes held at once: given, when it leaves room for at least one request,
// and otherwise (zero, negative, or too small for any request to be read)
// room for four of the largest requests at once. room is the most one
// request takes: MaxBody for serve, MaxBody+1 for the proxy, which reads
// one byte past the limit to tell an over-long body.
func MaxInFlight(given, room int64) int64 {
	if given < room {
		return 4 * room
	}
	return given
}
