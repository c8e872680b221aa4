"""Context capsules (seed 000): a main agent's state, distilled for a sub-agent's launch.

Pure logic over files, git and the store: the envelope and outline (``model``,
``markdown``), checks (``validate``, ``drift``, and the shared secret lint), where
capsules live (``storage``, ``inbox``), the prompt that asks for one (``prompt``) and
their rows in the documents registry (``registry``). Asking a session for a capsule and
injecting one at launch go through the orchestrator, a layer above.
"""
