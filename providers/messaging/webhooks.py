"""Where the messaging provider reaches us: the status-callback and inbound-text webhook paths (under the
public base URL), shared by the messaging service, the gateway and the local launcher."""
STATUS_PATH = "/api/v1/providers/sms/status"
INBOUND_PATH = "/api/v1/providers/sms/inbound"
