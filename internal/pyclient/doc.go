// Package pyclient holds an example agent loop in Python (example_agent.py)
// on cairn's Python client, the package cairnlog in clients/python;
// cairn_client.py re-exports that package for the example and for scripts
// written against the first client. The Go tests here run both with the
// machine's python3 against a real server.
package pyclient
