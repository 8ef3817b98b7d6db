"""The email queue through the API, for tests of what the platform tells a business's owner."""


async def owner_notices(api, key: str, subject_word: str = "", status: str = "sent") -> list[dict]:
    """The owner's notifications in the queue with this status whose subject has `subject_word`."""
    _, queue, _ = await api.request("GET", "/api/v1/emails", key=key, params={"status": status})
    return [e for e in queue["emails"] if e["kind"] == "owner_notification" and subject_word in e["subject"]]
