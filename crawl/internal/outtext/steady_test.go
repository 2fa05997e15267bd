package outtext

import "testing"

func TestSteadyText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`[DEBUG 2026-12-05T17:27:16.694Z] Uncaught exception`, `[DEBUG <time>] Uncaught exception`},
		{`{"level":30,"time":1796492042465,"pid":2,"hostname":"sandbox","msg":"up"}`, `{"level":30,"time":<time>,"pid":2,"hostname":"sandbox","msg":"up"}`},
		{`started at 2026-12-05 17:27:16,123+01:00 (epoch 1796492042)`, `started at <time> (epoch <time>)`},
		{`Error: LARA_ACCESS_KEY_ID must be set (exit 1, port 8080, id 123456)`, `Error: LARA_ACCESS_KEY_ID must be set (exit 1, port 8080, id 123456)`},
		{`npm error A complete log of this run can be found in: /home/sandbox/.npm/_logs/2026-12-05T17_27_16_694Z-debug-0.log`, `npm error A complete log of this run can be found in: /home/sandbox/.npm/_logs/<time>-debug-0.log`},
		{`version 2025.4.25, 12345678901234 bytes`, `version 2025.4.25, 12345678901234 bytes`},
	} {
		if got := Steady(tc.in); got != tc.want {
			t.Errorf("Steady(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
