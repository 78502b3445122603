import { formatMoney } from './format';

export interface CartItem {
  sku: string;
  price: number;
  quantity: number;
}

class BaseCart {
  protected items: CartItem[] = [];
}

export class ShoppingCart extends BaseCart {
  addItem(item: CartItem): void {
    this.items.push(item);
  }

  subtotal(): number {
    return this.items.reduce((sum, item) => sum + item.price * item.quantity, 0);
  }
}

export function checkoutCart(cart: ShoppingCart): string {
  return formatMoney(cart.subtotal());
}
