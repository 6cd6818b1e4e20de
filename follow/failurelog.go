package follow

import "log/slog"

// failureLog logs a task that keeps failing (a poll of a Change List that
// is down) without a line every time: the first failure, then the 2nd,
// 4th, 8th... in a row, and a line when it recovers.
type failureLog struct {
	inARow int
}

// log records the outcome of one attempt.
func (l *failureLog) log(log *slog.Logger, err error) {
	if err == nil {
		if l.inARow > 0 {
			log.Info("following changes again", "failed_polls", l.inARow)
		}
		l.inARow = 0
		return
	}
	l.inARow++
	if l.inARow&(l.inARow-1) == 0 { // a power of two
		log.Error("following changes", "err", err, "failed_polls", l.inARow, "next_log_after", 2*l.inARow)
	}
}
