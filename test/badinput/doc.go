// Package badinput holds the table tests of bad input (issue 7): wrong
// command-line arguments and settings given to the starter CLI, bad RPC
// lines sent to the RPC loop, damaged or unknown session files, and an
// auth.json with wrong permissions or contents. Each case checks that the
// problem is named in a clear, one-line error; CLI cases exit with code
// 2, and the RPC loop keeps serving after every bad line. None of them
// needs a Temporal server: the cases that need one (unknown session ids
// at the server, signals with wrong payloads) are in test/faults.
package badinput
