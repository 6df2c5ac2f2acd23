package headcache

import "golang.org/x/sys/windows"

// alive reports whether process pid is running: it can be opened and
// has no exit code yet. (Windows's os.Process.Signal sends nothing but
// Kill, so the Unix probe, signal 0, would call every process dead.)
func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		// Gone, or not ours to open: a process of another user does not
		// share this user's cache.
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	const stillActive = 259 // STILL_ACTIVE
	return windows.GetExitCodeProcess(h, &code) == nil && code == stillActive
}
