"""The provider fidelity check (`make provider-fidelity PROVIDER_SPECS=<folder>`): our simulators' accepted
properties, and the limits and values our services check before a request leaves, compared with the providers'
published documents; every difference printed, and those not documented as deliberate (`deviations`) failing it."""
