"""The public routes, one module per area; gateway.route_table gathers them."""
