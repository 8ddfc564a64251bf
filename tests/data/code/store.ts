import { EventEmitter } from "events";

export interface Item {
  id: string;
  count: number;
}

type Listener = (item: Item) => void;

export class Store extends EventEmitter {
  private items = new Map<string, Item>();

  private readonly onChange = (item: Item): void => {
    this.emit("change", item);
  };

  add(item: Item): void {
    this.items.set(item.id, item);
    this.onChange(item);
  }

  static empty = function (): Store {
    return new Store();
  };
}

export const handlers: Record<string, Listener> = {
  log: (item) => {
    console.log(item.id);
  },
  ignore() {
    return;
  },
};

export default class {
  run(store: Store): number {
    return store.listenerCount("change");
  }
}
