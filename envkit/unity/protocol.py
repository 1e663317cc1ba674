"""Message classes of the unityagents 0.4 ("API-4") wire protocol, built at run time.

Why at run time: the genuine client ships code generated for protobuf 3, which cannot be
imported under this project's protobuf 7, and compiling a .proto would add a protoc build
step. Only the wire format has to match the client: package name, message names (for the
gRPC method path), field numbers and field types. The schema below is this project's own
description of those facts, checked against the genuine client by the tests that drive it
(tests/test_unity_standin.py); it declares only what the stand-in needs plus the fields the
client reads or writes.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "communicator_objects"
EXCHANGE_METHOD = f"/{PACKAGE}.UnityToExternal/Exchange"
API_VERSION = "API-4"

# Command values carried in UnityRLInput.command.
STEP, RESET, QUIT = 0, 1, 2
# SpaceTypeProto and BrainTypeProto values.
SPACE_DISCRETE, SPACE_CONTINUOUS = 0, 1
BRAIN_EXTERNAL = 2

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "float": _F.TYPE_FLOAT,
    "int32": _F.TYPE_INT32,
    "bool": _F.TYPE_BOOL,
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
}

# Enums: name -> [(value name, number)].
_ENUMS: dict[str, list[tuple[str, int]]] = {
    "SpaceTypeProto": [("discrete", 0), ("continuous", 1)],
    "BrainTypeProto": [
        ("Player", 0),
        ("Heuristic", 1),
        ("External", 2),
        ("Internal", 3),
    ],
    "CommandProto": [("STEP", 0), ("RESET", 1), ("QUIT", 2)],
}

# Messages: name -> [(field name, number, type, kind)], kind "" (singular), "repeated" or
# "map" (type is then the value type; keys are strings). Types name a scalar, an enum or
# a message of this file.
_MESSAGES: dict[str, list[tuple[str, int, str, str]]] = {
    "Header": [("status", 1, "int32", ""), ("message", 2, "string", "")],
    "ResolutionProto": [
        ("width", 1, "int32", ""),
        ("height", 2, "int32", ""),
        ("gray_scale", 3, "bool", ""),
    ],
    "BrainParametersProto": [
        ("vector_observation_size", 1, "int32", ""),
        ("num_stacked_vector_observations", 2, "int32", ""),
        ("vector_action_size", 3, "int32", ""),
        ("camera_resolutions", 4, "ResolutionProto", "repeated"),
        ("vector_action_descriptions", 5, "string", "repeated"),
        ("vector_action_space_type", 6, "SpaceTypeProto", ""),
        ("vector_observation_space_type", 7, "SpaceTypeProto", ""),
        ("brain_name", 8, "string", ""),
        ("brain_type", 9, "BrainTypeProto", ""),
    ],
    # On the wire a map<string, float>; declared as its equivalent, a repeated key/value
    # message, so the order of the entries (which the client prints) is ours to choose.
    "FloatParameter": [("key", 1, "string", ""), ("value", 2, "float", "")],
    "EnvironmentParametersProto": [("float_parameters", 1, "FloatParameter", "repeated")],
    "AgentInfoProto": [
        ("stacked_vector_observation", 1, "float", "repeated"),
        ("visual_observations", 2, "bytes", "repeated"),
        ("text_observation", 3, "string", ""),
        ("stored_vector_actions", 4, "float", "repeated"),
        ("stored_text_actions", 5, "string", ""),
        ("memories", 6, "float", "repeated"),
        ("reward", 7, "float", ""),
        ("done", 8, "bool", ""),
        ("max_step_reached", 9, "bool", ""),
        ("id", 10, "int32", ""),
    ],
    "AgentActionProto": [
        ("vector_actions", 1, "float", "repeated"),
        ("text_actions", 2, "string", ""),
        ("memories", 3, "float", "repeated"),
    ],
    "AgentInfoList": [("value", 1, "AgentInfoProto", "repeated")],
    "AgentActionList": [("value", 1, "AgentActionProto", "repeated")],
    "UnityRLOutput": [
        ("global_done", 1, "bool", ""),
        ("agentInfos", 2, "AgentInfoList", "map"),
    ],
    "UnityRLInput": [
        ("agent_actions", 1, "AgentActionList", "map"),
        ("environment_parameters", 2, "EnvironmentParametersProto", ""),
        ("is_training", 3, "bool", ""),
        ("command", 4, "CommandProto", ""),
    ],
    "UnityRLInitializationOutput": [
        ("name", 1, "string", ""),
        ("version", 2, "string", ""),
        ("log_path", 3, "string", ""),
        ("brain_parameters", 5, "BrainParametersProto", "repeated"),
        ("environment_parameters", 6, "EnvironmentParametersProto", ""),
    ],
    "UnityRLInitializationInput": [("seed", 1, "int32", "")],
    "UnityOutput": [
        ("rl_output", 1, "UnityRLOutput", ""),
        ("rl_initialization_output", 2, "UnityRLInitializationOutput", ""),
        ("custom_data_output", 3, "string", ""),
    ],
    "UnityInput": [
        ("rl_input", 1, "UnityRLInput", ""),
        ("rl_initialization_input", 2, "UnityRLInitializationInput", ""),
        ("custom_data_input", 3, "int32", ""),
    ],
    "UnityMessage": [
        ("header", 1, "Header", ""),
        ("unity_output", 2, "UnityOutput", ""),
        ("unity_input", 3, "UnityInput", ""),
    ],
}


def _set_type(field: Any, type_name: str) -> None:
    """Fill a FieldDescriptorProto's type from a scalar, enum or message name."""
    if type_name in _SCALARS:
        field.type = _SCALARS[type_name]
    elif type_name in _ENUMS:
        field.type = _F.TYPE_ENUM
        field.type_name = f".{PACKAGE}.{type_name}"
    else:
        field.type = _F.TYPE_MESSAGE
        field.type_name = f".{PACKAGE}.{type_name}"


def _file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    """Describe the whole schema as one proto3 file."""
    fdp = descriptor_pb2.FileDescriptorProto(name="reacher_unity_api4.proto", package=PACKAGE, syntax="proto3")
    for enum_name, values in _ENUMS.items():
        enum = fdp.enum_type.add(name=enum_name)
        for value_name, number in values:
            enum.value.add(name=value_name, number=number)
    for msg_name, fields in _MESSAGES.items():
        msg = fdp.message_type.add(name=msg_name)
        for name, number, type_name, kind in fields:
            field = msg.field.add(name=name, number=number)
            if kind == "map":
                # A map is a repeated nested "<Name>Entry" message marked map_entry.
                entry_name = "".join(p[:1].upper() + p[1:] for p in name.split("_")) + "Entry"
                entry = msg.nested_type.add(name=entry_name)
                entry.options.map_entry = True
                key = entry.field.add(name="key", number=1, label=_F.LABEL_OPTIONAL)
                key.type = _F.TYPE_STRING
                value = entry.field.add(name="value", number=2, label=_F.LABEL_OPTIONAL)
                _set_type(value, type_name)
                field.label = _F.LABEL_REPEATED
                field.type = _F.TYPE_MESSAGE
                field.type_name = f".{PACKAGE}.{msg_name}.{entry_name}"
            else:
                field.label = _F.LABEL_REPEATED if kind == "repeated" else _F.LABEL_OPTIONAL
                _set_type(field, type_name)
    service = fdp.service.add(name="UnityToExternal")
    service.method.add(
        name="Exchange",
        input_type=f".{PACKAGE}.UnityMessage",
        output_type=f".{PACKAGE}.UnityMessage",
    )
    return fdp


# A private pool, so these names never clash with another copy of them in the process.
_POOL = descriptor_pool.DescriptorPool()
_FILE = _POOL.Add(_file_descriptor())


def message_class(name: str) -> type:
    """Return the generated class of one message of the schema, e.g. 'UnityMessage'."""
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{PACKAGE}.{name}"))


UnityMessage = message_class("UnityMessage")
AgentInfoProto = message_class("AgentInfoProto")
BrainParametersProto = message_class("BrainParametersProto")
