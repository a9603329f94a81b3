// Package clienterror decides what the client of a query-service request is told about
// an error, for every transport of the service: the HTTP API turns the answer into a
// status, the MCP server into a tool error's text.
//
// The decision reads the kinds of package errkind. The client's own mistakes are the
// errors of a Public kind (Invalid, NotFound, Conflict, Unavailable), the engine's
// sentinels (which carry no kind) and a refusal of package access; the client reads
// their text as it is. A failure of the service is told by what failed, never with the
// backend's text: a store that is down (errkind.Down) by its name, the model endpoint
// by its role, anything else, a store's or the bus's kinds included (a NotFound meant
// for the store's caller, a Permanent), as an internal error with the request's trace
// id, under which the transport logs the details.
package clienterror
