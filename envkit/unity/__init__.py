"""The stand-in for the course's Unity binaries: the unityagents 0.4 ("API-4") gRPC protocol
(`protocol`), the server that serves a scene's built-in environment through it (`standin`: each
scene's own `standin.py` hands it a `Scene`), the opener of a Unity binary through the genuine
client (`launch`), and the scripts the `Reacher_Linux*/` and `Crawler_Linux/` executables run
(`standin.sh`, `setup.sh`)."""
