package settings

// checkPushTLS checks the stream.push TLS keys together: a certificate
// and its key come as a pair, and a certificate is served only with TLS.
// Whether the files exist and match is checked where they are read, when
// the worker starts its push listener (internal/app).
func checkPushTLS(s Stream) *problem {
	switch {
	case s.PushCertFile != "" && s.PushKeyFile == "":
		return &problem{key: "stream.pushKeyFile", reason: "must be set with stream.pushCertFile (the certificate's private key)", quiet: true}
	case s.PushKeyFile != "" && s.PushCertFile == "":
		return &problem{key: "stream.pushCertFile", reason: "must be set with stream.pushKeyFile (the key's certificate)", quiet: true}
	case s.PushCertFile != "" && s.PushTLS == PushTLSOff:
		return &problem{key: "stream.pushTLS", value: s.PushTLS, reason: "must not be off when stream.pushCertFile is set"}
	}
	return nil
}
