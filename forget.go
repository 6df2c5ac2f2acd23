package cairn

// Forget drops s from the workspace's cache of sessions (see Session),
// so that a long-running process that touches many session names, such
// as the HTTP server, holds only the sessions it keeps itself. s keeps
// working; the next Session call for its name returns a new *Session,
// which reads the head from the store again. Forget does nothing if the
// workspace already caches another *Session under that name.
func (w *Workspace) Forget(s *Session) {
	if w == nil || s == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sessions[s.name] == s {
		delete(w.sessions, s.name)
	}
}
