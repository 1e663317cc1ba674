"""The stand-in for the Unity Reacher binary: the unityagents 0.4 ("API-4") gRPC protocol
(`protocol`), the server that serves the built-in environment through it (`standin`),
and the scripts the `Reacher_Linux*/` executables run (`standin.sh`, `setup.sh`)."""
