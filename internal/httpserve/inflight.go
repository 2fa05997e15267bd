package httpserve

// MaxInFlight is the one default rule for a server's bound on request body
// bytes held at once: given, when it leaves room for at least one body of
// maxBody bytes, and otherwise (zero, negative, or too small for any body
// to be read) 4 × maxBody, room for four of the largest bodies at once.
func MaxInFlight(given, maxBody int64) int64 {
	if given < maxBody {
		return 4 * maxBody
	}
	return given
}
