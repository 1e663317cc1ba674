"""DDPG variants, each a small piece beside the readable agent, switched on by config keys.

``exploration: "gaussian" | "noisy"``, ``replay: "prioritized"``, ``batch_norm: true``, TD3's
three switches, ``ensemble: N`` (REDQ's critics) and ``crossq: true`` are ``VariantConfig``'s
keys (``ddpg/variants/config.py``; ``ddpg_agent.DDPGConfig`` holds plain DDPG, n-step returns
included). ``VariantAgent`` (``ddpg/variants/agent.py``) puts the chosen pieces
together; ``train.py --config '{"replay": "prioritized"}'`` uses it by itself.
Report.md ("What mattered") has what each did on Reacher, measured over 5 seeds.
"""

from ddpg.variants.agent import VariantAgent
from ddpg.variants.config import VariantConfig, parse_config, variants_of

__all__ = ["VariantAgent", "VariantConfig", "parse_config", "variants_of"]
