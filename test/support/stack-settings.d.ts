export declare const stackSettingNames: string[];
export declare function stackSettings(): Record<string, string>;
