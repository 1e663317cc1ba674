"""DDPG variants, each a small piece beside the readable agent, switched on by config keys.

The variants are ``registry.VARIANTS``, one entry each: the config switch that turns it on (a
``VariantConfig`` key, ``ddpg/variants/config.py``; ``ddpg_agent.DDPGConfig`` holds plain DDPG, n-step
returns included) and its piece. ``VariantAgent`` (``ddpg/variants/agent.py``) puts the chosen pieces
together; ``train.py --config '{"replay": "prioritized"}'`` uses it by itself. docs/variants.md's
table is made from the registry.
Report.md ("What mattered") has what each did on Reacher, measured over 5 seeds.
"""

from ddpg.variants.agent import VariantAgent
from ddpg.variants.config import VariantConfig, parse_config, variants_of

__all__ = ["VariantAgent", "VariantConfig", "parse_config", "variants_of"]
