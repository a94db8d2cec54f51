"""shop: inventory, carts, pricing and checkout in integer cents."""
