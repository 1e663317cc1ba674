"""The stand-in for the course's Unity binaries: the unityagents 0.4 ("API-4") gRPC protocol
(`protocol`), the server that serves a built-in environment through it (`standin`: Reacher, or
the Crawler of `crawler/` with `--env crawler`), and the scripts the `Reacher_Linux*/` and
`Crawler_Linux/` executables run (`standin.sh`, `setup.sh`)."""
