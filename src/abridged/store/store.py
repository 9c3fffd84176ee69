"""The durable store: ``Store(url)``, every operation on conversations, sessions and messages."""

from __future__ import annotations

from abridged.store.calls import CallOps
from abridged.store.changes import ChangeOps
from abridged.store.keys import KeyOps
from abridged.store.leases import LeaseOps
from abridged.store.listing import ListingOps
from abridged.store.search import MessageSearchOps


class Store(MessageSearchOps, LeaseOps, KeyOps, CallOps, ChangeOps, ListingOps):
    """Durable conversations on SQLite (default) or PostgreSQL, through one async API.

    >>> store = Store("/tmp/chat.db")  # doctest: +SKIP
    >>> convo = await store.create_conversation(owner="alice")  # doctest: +SKIP
    >>> await store.append(convo.id, Message.user("hi"))  # doctest: +SKIP
    >>> context = await store.load_context(convo.id)  # doctest: +SKIP

    Operations are grouped by what they act on: conversations (``create_conversation``,
    ``conversation_key``, ``open_conversation``, ``list_conversations``, ``update_settings``,
    ``delete_conversation``), messages (``append``, ``append_many``, ``deliver``,
    ``edit_message``, ``get_message``, ``find_message``, ``stored_messages``, ``load_context``,
    ``history``), sessions (``new_session``, ``resume``, ``list_sessions``, ``get_session``,
    ``finalize_session``, ``finalize_pending``, ``delete_session``), the single writer
    (``commit_compaction``, ``set_prune_boundary``, ``compactions``), ``search``
    (summaries) and ``search_messages`` (message text),
    the turn lease (``acquire_turn``, ``queue_turn``, ``renew_turn``, ``release_turn``,
    ``turn_lease``), the
    service's API keys (``create_api_key``, ``tenant_for_key``, ``list_api_keys``,
    ``revoke_api_key``) and the model calls kept for the call inspector (``record_calls``,
    ``list_calls``, ``call_count``, ``get_call``, ``sent_messages``); changes heard across
    processes (``announce_change``, ``follow_changes``); conversations by page with their
    compactions and last request (``conversation_page``, ``note_request``,
    ``last_request``). Every operation that
    names a conversation takes ``owner=``: when given, a conversation of another owner raises
    ``OwnershipError`` and nothing is read or changed. Conversation ids are global;
    ``create_conversation(name=..., owner=...)`` makes one under a name of the owner's own (as
    the HTTP service does for its tenants) and ``conversation_key(name, owner=...)`` finds its
    id again.
    """

    async def __aenter__(self) -> Store:
        await self.open()
        return self
